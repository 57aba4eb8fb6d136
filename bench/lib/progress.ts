/**
 * @module bench/lib/progress
 * One line per step on stderr with the elapsed time, so a long run shows where it is.
 */
const started = Date.now();

export function progress(message: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${seconds}s] ${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
