/**
 * The runs list's state as its URL holds it, so a filtered or paged list can be linked to,
 * bookmarked and reloaded. The cursor is the store's own, passed back as it came.
 */
/** What a list keeps from page to page: its filters, its order and its page size. */
export const RUN_FILTER_PARAMS = ['dag', 'state', 'trigger', 'from', 'to', 'order', 'limit'] as const;
export type RunFilterParam = (typeof RUN_FILTER_PARAMS)[number];
export type RunListParams = Partial<Record<RunFilterParam | 'cursor', string>>;

/** The list's parameters read from a URL's search part; an absent or empty one is no filter. */
export function runListParams(search: URLSearchParams, prefix = ''): RunListParams {
  const params: RunListParams = {};
  for (const key of [...RUN_FILTER_PARAMS, 'cursor'] as const) {
    const value = search.get(prefix + key);
    if (value) params[key] = value;
  }
  return params;
}

/**
 * The URL of `path` with these parameters, keeping the other parameters of `keep` (a
 * DAG page keeps its own). `prefix` names the list's parameters where a page holds other
 * ones too (`runs.cursor` on a DAG page).
 */
export function runListHref(path: string, params: RunListParams, keep?: URLSearchParams, prefix = ''): string {
  const search = new URLSearchParams(keep);
  for (const key of [...RUN_FILTER_PARAMS, 'cursor'] as const) {
    search.delete(prefix + key);
    const value = params[key];
    if (value) search.set(prefix + key, value);
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}
