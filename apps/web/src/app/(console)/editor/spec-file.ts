'use client';

import { useState } from 'react';
import { parse as parseYaml } from 'yaml';
import { toDraft, type DraftSpec } from './draft';

/** Reads a spec from a JSON or YAML file, or throws saying what is wrong with it. */
export async function readSpecFile(file: File): Promise<DraftSpec> {
  const text = await file.text();
  const value: unknown = /\.ya?ml$/i.test(file.name) ? parseYaml(text) : JSON.parse(text);
  const draft = toDraft(value);
  if (!draft.ok) throw new Error(draft.message);
  return draft.spec;
}

/** Downloads the spec as `<id>.json`. */
export function downloadSpec(spec: DraftSpec): void {
  const blob = new Blob([`${JSON.stringify(spec, null, 2)}\n`], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `${spec.id || 'dag'}.json`;
  a.click();
  URL.revokeObjectURL(url);
}

/** Importing a spec file into the draft through `load`, with the reason a file was refused. */
export function useSpecImport(load: (spec: DraftSpec) => void) {
  const [error, setError] = useState<string | null>(null);
  const onImport = async (file: File) => {
    setError(null);
    try {
      load(await readSpecFile(file));
    } catch (err) {
      setError(`${file.name}: ${(err as Error).message}`);
    }
  };
  return { error, onImport };
}
