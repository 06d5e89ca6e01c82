import { describe, expect, it } from 'vitest';
import { maskChannelUrl, maskUrlsIn } from '../src/notify/mask';

describe('channel URL masking', () => {
  it('keeps scheme, host and port and only the last four characters of a long path and query', () => {
    expect(maskChannelUrl('https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnop')).toBe('https://hooks.slack.com/…mnop');
    expect(maskChannelUrl('http://127.0.0.1:8099/hooks/receiver?key=s3cr3t-value')).toBe('http://127.0.0.1:8099/…alue');
  });

  it('hides a short path whole, keeps a bare host, and drops user info and fragments', () => {
    expect(maskChannelUrl('https://hooks.example.com/ops')).toBe('https://hooks.example.com/…');
    expect(maskChannelUrl('https://hooks.example.com')).toBe('https://hooks.example.com/');
    expect(maskChannelUrl('https://user:pa55word@hooks.example.com/')).toBe('https://hooks.example.com/');
    expect(maskChannelUrl('https://user:pa55word@hooks.example.com/a/long/enough/path#frag')).toBe('https://hooks.example.com/…frag');
  });

  it('tells two long URLs of one host apart by their tails', () => {
    const a = maskChannelUrl('https://hooks.slack.com/services/T1/B1/aaaaaaaaaaaa1111');
    const b = maskChannelUrl('https://hooks.slack.com/services/T1/B1/aaaaaaaaaaaa2222');
    expect(a).not.toBe(b);
  });

  it('never echoes something that is no URL', () => {
    expect(maskChannelUrl('not a url with a secret')).toBe('…');
    expect(maskChannelUrl('')).toBe('…');
  });

  it('masks every URL inside a text and leaves the rest of it', () => {
    expect(maskUrlsIn('no answer: connect ECONNREFUSED for https://hooks.slack.com/services/T1/B1/secrettoken1234 (twice)')).toBe(
      'no answer: connect ECONNREFUSED for https://hooks.slack.com/…1234 (twice)',
    );
    expect(maskUrlsIn('the receiver answered HTTP 500')).toBe('the receiver answered HTTP 500');
  });
});
