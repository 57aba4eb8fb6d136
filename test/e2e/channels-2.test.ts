/** Market, probabilities and oracle channels end to end: part 2 of 2 of the simulator profile matrix (the suite: suites/channels.ts). */
import { matrixPart } from '../support/profile-matrix.ts';
import { channelsSuite } from './suites/channels.ts';

channelsSuite(matrixPart(2, 2));
