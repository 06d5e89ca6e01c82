'use client';

import { describeError } from './errors';

/**
 * The field a server refusal names: the store's `details.field`, else the `field: problem`
 * a schema check starts its message with. Null when it names none, and the refusal is then
 * shown for the form as a whole.
 */
export function refusedField(error: unknown): string | null {
  if (!error) return null;
  const shown = describeError(error);
  const field = shown.details?.field;
  if (typeof field === 'string') return field;
  const named = /^([A-Za-z][\w.]*): /.exec(shown.message);
  return named ? named[1]!.split('.')[0]! : null;
}

/** Whether a refusal is about one of a form's own fields, so it is shown next to it rather than above the form. */
export function namesOneOf(error: unknown, fields: readonly string[]): boolean {
  const field = refusedField(error);
  return field !== null && fields.includes(field);
}

/** A refusal's message next to the field it names, and nothing for any other field. */
export function FieldError({ error, field }: { error: unknown; field: string }) {
  if (refusedField(error) !== field) return null;
  const shown = describeError(error);
  const message = shown.message.startsWith(`${field}: `) ? shown.message.slice(field.length + 2) : shown.message;
  return (
    <span className="inline-error" role="alert" data-testid={`field-error-${field}`} data-code={shown.code}>
      {message}
    </span>
  );
}
