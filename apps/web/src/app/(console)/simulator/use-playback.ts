'use client';

import { useEffect, useRef } from 'react';

/**
 * Advances virtual time by `speed` virtual milliseconds per real one while playing, once
 * per animation frame, so playback follows the display's pace and pauses with a hidden tab.
 */
export function usePlayback(playing: boolean, speed: number, advance: (byMs: number) => void): void {
  const step = useRef(advance);
  // The latest callback, without restarting the frame loop each time the page re-renders.
  useEffect(() => {
    step.current = advance;
  });
  useEffect(() => {
    if (!playing) return;
    let frame = 0;
    let last = performance.now();
    const tick = (now: number) => {
      step.current((now - last) * speed);
      last = now;
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [playing, speed]);
}
