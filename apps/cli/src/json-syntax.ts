/**
 * Finds the first syntax error in a JSON text and says what was expected there. JSON.parse
 * on Node 20 reports some errors with no position at all ("Unexpected end of JSON input",
 * or a quote of the text), which leaves a person with a long spec file nowhere to look.
 * This walks the text once, with an explicit stack so a deeply nested file cannot
 * overflow the call stack, and is only called after JSON.parse has already refused it.
 */

export interface JsonSyntaxError {
  message: string;
  line: number;
  column: number;
}

type Expect = 'value' | 'first-value' | 'key' | 'first-key' | 'colon' | 'after';

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;

/** The first syntax error in `text`, or null when the text is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | null {
  const at = (offset: number, message: string): JsonSyntaxError => ({ message, ...lineAndColumn(text, offset) });
  const stack: ('{' | '[')[] = [];
  let expect: Expect = 'value';
  let afterComma = false;
  let i = 0;
  for (;;) {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
    if (i >= text.length) {
      if (expect === 'after' && stack.length === 0) return null;
      if (stack.length === 0 && expect === 'value') return at(i, 'the file holds no JSON value');
      const open = stack.at(-1) === '{' ? 'an object' : 'an array';
      return at(i, `the file ends inside ${open} (a closing ${stack.at(-1) === '{' ? "'}'" : "']'"} is missing)`);
    }
    const c = text[i]!;
    switch (expect) {
      case 'first-value':
      case 'value': {
        if (expect === 'first-value' && c === ']') {
          stack.pop();
          i++;
          expect = 'after';
          break;
        }
        if (afterComma && (c === ']' || c === '}')) return at(i, `a trailing comma before ${show(c)} is not allowed in JSON`);
        if (c === '{' || c === '[') {
          stack.push(c);
          i++;
          expect = c === '{' ? 'first-key' : 'first-value';
          break;
        }
        if (c === '"') {
          const end = scanString(text, i);
          if (typeof end !== 'number') return at(end.offset, end.message);
          i = end;
          expect = 'after';
          break;
        }
        const token = matchAt(NUMBER, text, i) ?? matchAt(LITERAL, text, i);
        if (!token) return at(i, `expected a value, found ${show(c)}`);
        i += token.length;
        expect = 'after';
        break;
      }
      case 'first-key':
      case 'key': {
        if (expect === 'first-key' && c === '}') {
          stack.pop();
          i++;
          expect = 'after';
          break;
        }
        if (afterComma && c === '}') return at(i, "a trailing comma before '}' is not allowed in JSON");
        if (c !== '"') return at(i, `expected a property name in double quotes, found ${show(c)}`);
        const end = scanString(text, i);
        if (typeof end !== 'number') return at(end.offset, end.message);
        i = end;
        expect = 'colon';
        break;
      }
      case 'colon':
        if (c !== ':') return at(i, `expected ':' after the property name, found ${show(c)}`);
        i++;
        expect = 'value';
        break;
      case 'after': {
        const top = stack.at(-1);
        if (!top) return at(i, `unexpected ${show(c)} after the end of the JSON value`);
        const close = top === '{' ? '}' : ']';
        if (c === ',') {
          i++;
          expect = top === '{' ? 'key' : 'value';
          afterComma = true;
          continue;
        }
        if (c !== close) return at(i, `expected ',' or '${close}', found ${show(c)}`);
        stack.pop();
        i++;
        break;
      }
    }
    afterComma = false;
  }
}

/** The offset just past the string that opens at `start`, or where and why it is broken. */
function scanString(text: string, start: number): number | { offset: number; message: string } {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') return i + 1;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return { offset: i, message: 'a \\u escape needs four hex digits' };
        i += 6;
        continue;
      }
      if (next === undefined || !ESCAPES.has(next)) return { offset: i, message: `invalid escape ${show(`\\${next ?? ''}`)} in a string` };
      i += 2;
      continue;
    }
    if (c < ' ')
      return { offset: i, message: c === '\n' ? "a string runs past the end of its line (a closing '\"' is missing)" : 'a control character inside a string must be escaped' };
    i++;
  }
  return { offset: start, message: "a string is never closed (a closing '\"' is missing)" };
}

function matchAt(pattern: RegExp, text: string, offset: number): string | undefined {
  pattern.lastIndex = offset;
  return pattern.exec(text)?.[0];
}

function show(text: string): string {
  return /^[\x21-\x7e]+$/.test(text) ? `'${text}'` : JSON.stringify(text);
}

/** One-based line and column of `offset`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
