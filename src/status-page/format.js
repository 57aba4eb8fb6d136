/**
 * @module status-page/format
 * Display helpers for the status page: ages, durations, byte counts, decimal text and SVG sparklines.
 */

/** Sets text only when it changed, so unchanged cells are not re-laid-out every second. */
export function text(element, value) {
  if (element.textContent !== value) element.textContent = value;
}

/** `1 update`, `2 updates`: a count with its noun, singular for one. */
export function plural(count, noun) {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

export function formatAge(ms) {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return formatDuration(ms);
}

export function formatDuration(ms) {
  const seconds = Math.floor(ms / 1000);
  const parts = [
    [Math.floor(seconds / 86_400), 'd'],
    [Math.floor(seconds / 3600) % 24, 'h'],
    [Math.floor(seconds / 60) % 60, 'm'],
    [seconds % 60, 's'],
  ];
  const first = parts.findIndex(([value]) => value > 0);
  return first === -1
    ? '0s'
    : parts
        .slice(first, first + 2)
        .map(([value, unit]) => `${value}${unit}`)
        .join(' ');
}

/** A market's expiry as the picker shows it: `expires in 3d 4h`, `expired 2h 5m ago`, `resolved`. */
export function formatExpiry(status, expiresAtMs, nowMs) {
  if (status === 'RESOLVED') return 'resolved';
  if (Number.isNaN(expiresAtMs)) return status.toLowerCase();
  const left = expiresAtMs - nowMs;
  return left > 0 ? `expires in ${formatDuration(left)}` : `expired ${formatDuration(-left)} ago`;
}

export function formatBytes(bytes) {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Upstream prices carry 8 decimal places; trailing zeros beyond the second are noise on screen.
 * A text operation, so the exact decimal is never turned into a binary float.
 */
export function trimDecimal(value) {
  if (value === undefined || value === null) return '–';
  if (!value.includes('.')) return value;
  const [whole, fraction] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${trimmed}`;
}

/** Draws `values` as a polyline across the SVG's 300 x 40 viewBox. */
export function sparkline(svg, values) {
  if (values.length < 2) {
    svg.replaceChildren();
    return;
  }
  const max = Math.max(...values);
  const min = Math.min(...values);
  const span = max - min || 1;
  const points = values
    .map((value, index) => {
      const x = (index / (values.length - 1)) * 300;
      const y = 38 - ((value - min) / span) * 36;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
  let line = svg.querySelector('polyline');
  if (line === null) {
    line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    svg.append(line);
  }
  line.setAttribute('points', points);
}

/**
 * A field of an upstream body as text: a decimal string exactly as served, a number (upstream
 * serves some fields as JSON numbers) as JavaScript writes it, anything else (where a body is not
 * what upstream documents) as JSON. No arithmetic: what is shown is what was received.
 */
export function fieldText(value) {
  if (value === undefined || value === null) return '–';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
