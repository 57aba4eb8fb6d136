/**
 * @module bench/lib/long-soak/svg
 * The long soak's plot: one small panel per figure, each with one line per relay over the minutes
 * of the run, its own vertical scale (from 0, so that a flat line looks flat), the warm-up's end as
 * a dashed line and the run's events (fault bursts, a Redis restart) as marks along the time axis.
 */
import type { Point } from './analysis.ts';

export interface Panel {
  title: string;
  unit: string;
  /** One series per relay. */
  series: readonly (readonly Point[])[];
}

export interface RunEvent {
  minute: number;
  /** Short: it is written beside its mark. */
  label: string;
  /** Until this minute (a fault burst); a single instant otherwise. */
  untilMinute?: number;
}

export interface PlotOptions {
  title: string;
  totalMinutes: number;
  warmupMinutes: number;
  events: readonly RunEvent[];
}

const PANEL_WIDTH = 460;
const PANEL_HEIGHT = 150;
const COLUMNS = 2;
const MARGIN = { left: 64, right: 16, top: 26, bottom: 24 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A readable top of scale: 1, 2 or 5 times a power of ten, at least `value`. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function formatValue(value: number): string {
  if (value >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`;
  if (value >= 1e4) return `${(value / 1e3).toFixed(0)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function panelSvg(panel: Panel, options: PlotOptions, x0: number, y0: number): string {
  const width = PANEL_WIDTH - MARGIN.left - MARGIN.right;
  const height = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const top = niceCeiling(Math.max(0, ...panel.series.flat().map((point) => point.value)));
  const x = (minute: number) => x0 + MARGIN.left + (minute / options.totalMinutes) * width;
  const y = (value: number) => y0 + MARGIN.top + height - (value / top) * height;
  const parts: string[] = [
    `<text x="${x0 + MARGIN.left}" y="${y0 + 16}" font-size="13" font-weight="bold">${escapeXml(panel.title)} (${escapeXml(panel.unit)})</text>`,
    `<rect x="${x(0)}" y="${y(top)}" width="${width}" height="${height}" fill="none" stroke="#999"/>`,
    `<text x="${x(0) - 4}" y="${y(top) + 4}" font-size="11" text-anchor="end">${formatValue(top)}</text>`,
    `<text x="${x(0) - 4}" y="${y(top / 2) + 4}" font-size="11" text-anchor="end">${formatValue(top / 2)}</text>`,
    `<text x="${x(0) - 4}" y="${y(0) + 4}" font-size="11" text-anchor="end">0</text>`,
    `<text x="${x(options.totalMinutes)}" y="${y(0) + 16}" font-size="11" text-anchor="end">${formatValue(options.totalMinutes)} min</text>`,
    `<line x1="${x(options.warmupMinutes)}" y1="${y(top)}" x2="${x(options.warmupMinutes)}" y2="${y(0)}" stroke="#666" stroke-dasharray="4 3"/>`,
  ];
  for (const event of options.events) {
    const until = event.untilMinute ?? event.minute;
    parts.push(
      `<rect x="${x(event.minute)}" y="${y(0) + 2}" width="${Math.max(1.5, x(until) - x(event.minute))}" height="5" fill="#e377c2"><title>${escapeXml(event.label)}</title></rect>`,
    );
  }
  panel.series.forEach((points, index) => {
    if (points.length === 0) return;
    const path = points
      .map((point) => `${x(point.minute).toFixed(1)},${y(point.value).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<polyline points="${path}" fill="none" stroke="${COLOURS[index % COLOURS.length]}" stroke-width="1.5"/>`,
    );
  });
  return parts.join('\n');
}

/** The whole plot: panels in two columns, a legend of the relays and the marks. */
export function smallMultiplesSvg(
  panels: readonly Panel[],
  relays: readonly string[],
  options: PlotOptions,
): string {
  const rows = Math.ceil(panels.length / COLUMNS);
  const header = 48;
  const totalWidth = PANEL_WIDTH * COLUMNS;
  const totalHeight = header + rows * PANEL_HEIGHT;
  const legend = relays
    .map(
      (relay, index) =>
        `<text x="${16 + index * 130}" y="38" font-size="12" fill="${COLOURS[index % COLOURS.length]}">&#9472; ${escapeXml(relay)}</text>`,
    )
    .join('\n');
  const body = panels
    .map((panel, index) =>
      panelSvg(
        panel,
        options,
        (index % COLUMNS) * PANEL_WIDTH,
        header + Math.floor(index / COLUMNS) * PANEL_HEIGHT,
      ),
    )
    .join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${totalWidth}" height="${totalHeight}" viewBox="0 0 ${totalWidth} ${totalHeight}" font-family="sans-serif">`,
    `<title>${escapeXml(options.title)}</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="16" y="20" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
    legend,
    `<text x="${16 + relays.length * 130}" y="38" font-size="12" fill="#666">dashed: end of warm-up; pink marks: fault bursts, Redis restart</text>`,
    body,
    '</svg>',
    '',
  ].join('\n');
}
