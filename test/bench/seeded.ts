// Shared by the seeded bench generators (test/bench/cluster.ts, test/bench/songPairs.ts): the
// generator (also test/analytics/differential.test.ts's) and the names and words both print titles with. Changing a list changes both outputs
// (fixtures/catalog/song-pairs.tsv is checked to be the generator's output).

/** A seeded 32-bit generator (mulberry32): the same numbers for the same seed on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Title words both generators use, in this order. */
export const SONG_WORDS = [
  'heart',
  'fire',
  'dream',
  'baby',
  'time',
  'light',
  'dance',
  'rain',
  'home',
  'blue',
  'gold',
  'wild',
];

export const ARTISTS = [
  'Lana Grey',
  'Jo Rivers',
  'MC Kato',
  'Bea Moreno',
  'DJ Sol',
  'The Tides',
  'Kira',
  'Nova Lane',
  'Orla Finn',
  'Mara Velde',
  'Kai Moss',
  'Inès Dubois',
  'Sofía Ruiz',
  'Yuki Tanaka',
  'Anya Petrova',
  'Nikos Pappas',
  'Min-ji Park',
  'Marco Deluca',
  'Tomás Silva',
  'Ava Stone',
  'Lukas Berg',
  'Zara Khan',
  'Leo Hart',
  'Emeka Obi',
  'Chloé Martin',
  'Daniel Cruz',
  'Hana Sato',
  'Ivan Volkov',
  'Eleni Kosta',
  'Ji-ho Lee',
];

export const REMIXERS = [
  'Tiësto',
  'Alesso',
  'Kygo',
  'Purple Disco Machine',
  'Joris Voorn',
  'Honey Dijon',
  'Claptone',
  'Fisher',
  'Sonny Fodera',
  'Mochakk',
];
