import fc from 'fast-check';
import { BAD_STRINGS, DEEP, leafPaths, replaceAt } from './bad-input';

/**
 * fast-check arbitraries for input a hostile or broken client sends: strings that mix
 * ordinary text with NULs, lone surrogates of either half and the DEEP marker (5,000-deep
 * nesting once the value is written with toJsonText), arbitrary JSON around them, and a
 * procedure's valid input with one field replaced by any of these.
 */

const piece = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', ...BAD_STRINGS) },
);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.array(piece, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.constant(DEEP) },
);

const { value: hostileJson } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    // Below every minimum, past every maximum, past what a double holds exactly.
    fc.constantFrom(-1, -(2 ** 63), -1e308, 1e308, 2 ** 64, Number.MAX_SAFE_INTEGER + 2),
    hostileString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileString, tie('value'), { maxKeys: 4 }),
  ),
}));

export { hostileJson };

/** A procedure's input: wholly arbitrary, or its valid base with one field replaced. */
export function hostileInput(base: unknown): fc.Arbitrary<unknown> {
  const paths = leafPaths(base).filter((p) => p.length > 0);
  const arbitraries: fc.Arbitrary<unknown>[] = [hostileJson];
  if (paths.length > 0) arbitraries.push(fc.tuple(fc.constantFrom(...paths), hostileJson).map(([path, value]) => replaceAt(base, path, value)));
  return fc.oneof(...arbitraries);
}
