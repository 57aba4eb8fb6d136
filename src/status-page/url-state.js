/**
 * @module status-page/url-state
 * What the page keeps in its URL (`?tab=`, `?market=`, `?user=` ...), so that a reload or a shared
 * link comes back to the same view; the URL is replaced, not pushed, so Back leaves the page.
 */

export function param(name) {
  return new URLSearchParams(location.search).get(name) ?? undefined;
}

export function setParam(name, value) {
  const url = new URL(location.href);
  if (value === undefined) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  history.replaceState(null, '', url);
}
