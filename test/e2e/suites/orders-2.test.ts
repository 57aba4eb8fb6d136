/** Orders end to end: part 2 of 2 of the simulator profile matrix (the suite: orders.ts). */
import { matrixPart } from '../../support/profile-matrix.ts';
import { ordersSuite } from './orders.ts';

ordersSuite(matrixPart(2, 2));
