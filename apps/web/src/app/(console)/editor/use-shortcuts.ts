'use client';

import { useEffect } from 'react';
import { isTyping } from './leave-guard';

export interface ShortcutActions {
  save(): void;
  undo(): void;
  redo(): void;
  layout(): void;
}

/**
 * The editor's keyboard shortcuts; Delete and Backspace are React Flow's own (the canvas's
 * deleteKeyCode), which React Flow ignores in fields too. None of them acts while the author
 * types in a field, except Ctrl+S, which first leaves the field so its edit is committed.
 */
export function useShortcuts({ save, undo, redo, layout }: ShortcutActions): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && key === 's') {
        e.preventDefault();
        if (isTyping(e.target)) (e.target as HTMLElement).blur();
        save();
        return;
      }
      if (isTyping(e.target) || isTyping(document.activeElement)) return;
      if (mod && (key === 'z' || key === 'y')) {
        e.preventDefault();
        if (key === 'z' && !e.shiftKey) undo();
        else redo();
      } else if (!mod && key === 'l') {
        layout();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [save, undo, redo, layout]);
}
