/** Bad input to an effect helper: names the field, and nothing was written. */
export class EffectInputError extends Error {
  override name = 'EffectInputError';
  readonly code = 'INVALID_INPUT';

  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}
