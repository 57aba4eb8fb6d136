/** Book and price streams end to end: part 2 of 2 of the simulator profile matrix (the suite: book-and-price.ts). */
import { matrixPart } from '../../support/profile-matrix.ts';
import { bookAndPriceSuite } from './book-and-price.ts';

bookAndPriceSuite(matrixPart(2, 2));
