/**
 * @module bench/lib/long-soak/prometheus-text
 * Reads figures out of a `/metrics` answer (Prometheus text format): a metric's samples summed over
 * its labels, or only those whose labels include the ones given.
 */

/** Sum of the samples of metric `name` (exactly that name) whose labels include `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    const labelText = rest.startsWith('{') ? rest.slice(1, rest.indexOf('}')) : '';
    const matches = Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`));
    if (!matches) continue;
    const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) {
      sum += value;
      found = true;
    }
  }
  return found ? sum : Number.NaN;
}
