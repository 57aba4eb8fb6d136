/** Probabilities fan-out end to end: part 2 of 2 of the simulator profile matrix (the suite: probabilities-fanout.ts). */
import { matrixPart } from '../../support/profile-matrix.ts';
import { probabilitiesFanoutSuite } from './probabilities-fanout.ts';

probabilitiesFanoutSuite(matrixPart(2, 2));
