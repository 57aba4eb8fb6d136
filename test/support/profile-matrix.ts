/**
 * @module test/support/profile-matrix
 * The end-to-end suites run under every simulator profile that serves the interface
 * (`simulatorProfileNames`); each suite is split over test files by profile, so that a file stays
 * within its time however many profiles the matrix holds.
 */
import { type SimulatorProfileName, simulatorProfileNames } from '../../src/sim/profile.ts';

/** Part `part` (1-based) of `parts`: every `parts`-th profile of the matrix. */
export function matrixPart(part: number, parts: number): SimulatorProfileName[] {
  return simulatorProfileNames.filter((_, index) => index % parts === part - 1);
}
