import { clipText } from '../input/free-form';
import { LIMITS } from '../limits';

/** Room kept in a chunk for the note that says lines were dropped. */
const NOTE_ROOM_CHARS = 200;

/**
 * The log lines of one running job not yet sent, for its next renewal to carry
 * (WorkerProtocolStore.renewLeases appends them to the attempt's streamed log). It holds
 * at most LIMITS.maxLogChunkChars between two renewals and LIMITS.maxStreamedLogChars over
 * the attempt; past either it drops lines and says so once, in the stream. The stream is for
 * watching a job live: the whole captured log still goes with the attempt's result.
 */
export class LogStream {
  private pending = '';
  private sentChars = 0;
  private dropped = 0;
  private ended = false;

  /** Holds one line for the next renewal, unless a limit is reached. */
  append(line: string): void {
    if (this.ended) return;
    // A line longer than a chunk is cut to one, so it is streamed in part rather than not at all.
    const text = `${clipText(line, LIMITS.maxLogChunkChars - NOTE_ROOM_CHARS - 1)}\n`;
    if (this.sentChars + this.pending.length + text.length > LIMITS.maxStreamedLogChars - NOTE_ROOM_CHARS) {
      this.ended = true;
      this.pending += `[the live log stops here at its limit of ${LIMITS.maxStreamedLogChars} characters; the whole log comes with the result]\n`;
      return;
    }
    if (this.pending.length + text.length > LIMITS.maxLogChunkChars - NOTE_ROOM_CHARS) {
      this.dropped++;
      return;
    }
    this.pending += text;
  }

  /** The lines held since the last take, for a renewal to carry; undefined when there are none, so the renewal stays as cheap as ever. */
  take(): string | undefined {
    if (this.dropped > 0) {
      this.pending += `[${this.dropped} lines not streamed: more than ${LIMITS.maxLogChunkChars} characters between two renewals]\n`;
      this.dropped = 0;
    }
    if (this.pending.length === 0) return undefined;
    const text = this.pending;
    this.pending = '';
    this.sentChars += text.length;
    return text;
  }
}
