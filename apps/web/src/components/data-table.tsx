'use client';

import type { CSSProperties, ReactNode } from 'react';
import { Empty } from './ui';

/** A column's head cell; a column with no head (the actions column) is a bare `<th />`. */
export interface Column {
  head?: ReactNode;
  className?: string;
  style?: CSSProperties;
}

/** What a row's `<tr>` carries besides its cells: its test id and data attributes. */
export type RowAttributes = { 'data-testid'?: string } & Record<`data-${string}`, string | number | undefined>;

/**
 * The console's list table: nothing while the list loads, `empty` when it came back empty,
 * else a scrolling table with one head cell per column and one row per item, whose cells
 * `children` renders. Columns given as false (one only some roles see) are left out, so a
 * row's cells must leave out the same ones.
 */
export function DataTable<T>({
  rows,
  empty,
  columns,
  rowKey,
  rowAttributes,
  testId,
  className = 'table',
  children,
}: {
  rows: readonly T[] | undefined;
  empty: ReactNode;
  columns: readonly (Column | false)[];
  rowKey: (row: T) => string;
  rowAttributes?: (row: T) => RowAttributes;
  testId: string;
  className?: string;
  children: (row: T) => ReactNode;
}) {
  if (rows === undefined) return null;
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return (
    <div className="table-scroll">
      <table className={className} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c, i) =>
              c === false ? null : (
                <th key={i} className={c.className} style={c.style}>
                  {c.head}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowAttributes?.(row)}>
              {children(row)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
