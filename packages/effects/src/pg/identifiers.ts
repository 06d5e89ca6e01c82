import { EffectInputError } from '../errors';

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * A table or column name as a quoted identifier. Only plain names (optionally one schema
 * qualifier for a table) are accepted, so no caller's text ever becomes SQL.
 */
export function quoteName(field: string, name: unknown, { qualified = false } = {}): string {
  if (typeof name !== 'string') throw new EffectInputError(field, 'must be a name of letters, digits and underscores');
  const parts = qualified ? name.split('.') : [name];
  if (parts.length > 2 || !parts.every((p) => NAME.test(p)))
    throw new EffectInputError(
      field,
      `"${name.slice(0, 80)}" is not a plain name (letters, digits and underscores, at most 63, not starting with a digit${qualified ? '; one schema qualifier allowed' : ''})`,
    );
  return parts.map((p) => `"${p}"`).join('.');
}
