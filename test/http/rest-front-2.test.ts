/** The REST front: part 2 of 2 of the simulator profile matrix (the suite: suites/rest-front.ts). */
import { matrixPart } from '../support/profile-matrix.ts';
import { restFrontSuite } from './suites/rest-front.ts';

restFrontSuite(matrixPart(2, 2));
