// The answer the rest of the program expects.
export const answer = 41;
