// Helpers shared by the web client's Node tests.

/** A small deterministic xorshift32 generator of unsigned 32-bit integers, so failures reproduce. */
export function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}
