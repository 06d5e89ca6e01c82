'use client';

/** Virtual seconds per second of playback: the scaled fan-out's twenty-odd minutes take 20 s at 60×. */
export const SPEEDS = [10, 60, 300, 1200] as const;
export type Speed = (typeof SPEEDS)[number];

/** Virtual time since the simulation began, as m:ss (h:mm:ss past the hour). */
export function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** The slider moves in whole virtual seconds, and its far end is the simulation's last one. */
const STEP_MS = 1000;

export function ReplayControls({
  index,
  atMs,
  endMs,
  playing,
  speed,
  onTime,
  onPlay,
  onSpeed,
}: {
  index: number;
  atMs: number;
  endMs: number;
  playing: boolean;
  speed: Speed;
  onTime: (ms: number) => void;
  onPlay: () => void;
  onSpeed: (s: Speed) => void;
}) {
  const max = Math.ceil(endMs / STEP_MS) * STEP_MS;
  return (
    <div className="replay-controls">
      <button className="primary" onClick={onPlay} data-testid={`replay-play-${index}`} data-playing={playing ? 'true' : 'false'} aria-label={playing ? 'Pause' : 'Play'}>
        {playing ? '❚❚ Pause' : '▶ Play'}
      </button>
      <input
        type="range"
        min={0}
        max={max}
        step={STEP_MS}
        value={Math.min(max, Math.round(atMs / STEP_MS) * STEP_MS)}
        onChange={(e) => onTime(Number(e.target.value))}
        aria-label="virtual time"
        data-testid={`replay-slider-${index}`}
      />
      <span className="replay-time" data-testid={`replay-time-${index}`} data-at-ms={Math.round(atMs)}>
        {clock(atMs)} <span className="muted">of {clock(endMs)}</span>
      </span>
      <span className="replay-speeds" role="group" aria-label="playback speed">
        {SPEEDS.map((s) => (
          <button
            key={s}
            className={s === speed ? 'active' : ''}
            aria-pressed={s === speed}
            onClick={() => onSpeed(s)}
            data-testid={`replay-speed-${index}-${s}`}
            title={`${s} virtual seconds per second`}
          >
            {s}×
          </button>
        ))}
      </span>
    </div>
  );
}
