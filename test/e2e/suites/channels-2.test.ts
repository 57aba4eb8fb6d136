/** Market, probabilities and oracle channels end to end: part 2 of 2 of the simulator profile matrix (the suite: channels.ts). */
import { matrixPart } from '../../support/profile-matrix.ts';
import { channelsSuite } from './channels.ts';

channelsSuite(matrixPart(2, 2));
