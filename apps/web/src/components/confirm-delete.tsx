'use client';

/**
 * A Delete button that asks first: `question` says what goes with the deleted thing, and
 * `onConfirm` runs only when the operator agrees. The browser's own dialog is used, so the
 * question is modal, read by screen readers and answered from the keyboard.
 */
export function ConfirmDelete({ question, onConfirm, disabled, testId }: { question: string; onConfirm: () => void; disabled?: boolean; testId: string }) {
  return (
    <button
      type="button"
      data-testid={testId}
      disabled={disabled}
      onClick={() => {
        if (window.confirm(question)) onConfirm();
      }}
    >
      Delete
    </button>
  );
}
