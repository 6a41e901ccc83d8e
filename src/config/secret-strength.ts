/**
 * A lower bound on the bits a guesser who knows how people make up secrets must try: the
 * cheapest description as a chain of priced pieces (a shortest path, as zxcvbn does) —
 * characters, digit runs and years, sequences and keyboard runs, common words, repeats.
 */

const MAX_CHECKED = 256
const MIN_PIECE = 3

const KEYBOARD_ROWS = [
  '`1234567890-=', 'qwertyuiop[]\\', "asdfghjkl;'", 'zxcvbnm,./',
  '~!@#$%^&*()_+', 'QWERTYUIOP{}|', 'ASDFGHJKL:"', 'ZXCVBNM<>?'
]
const KEYS = KEYBOARD_ROWS.join('').length

const WORDS = new Set(`
a an the and or but if of to in on at by for from with without into onto over under about after before
is are was were be been am do does did has have had will would can could should shall may might must
i me my mine we us our you your he him his she her it its they them their this that these those there here
not no yes all any some every each one two three four five six seven eight nine ten first last next new old
very more most much many few less just only also even still again ever never always now then today
good bad big small long short high low best better great little right left true false real fake
make made get got give take put set let use used go going come see say know think want need like love
work works play run keep hold open close start stop end begin change time day year week month night
secret secrets key keys token tokens jwt jws jwk hmac hash sign signing signature auth authentication
authorization login logon password passwd pass passphrase credential credentials session sessions cookie
private public admin administrator root user users account accounts service server servers client api app
application web site prod production dev development stage staging test testing demo local localhost
default example sample temp temporary config configuration env environment internal external main master
company corp inc team project system systems data database cloud cluster host node backend frontend gate
gatehouse house home office access security secure safe random super very strong long value string code
do not share change this replace me please ours mine something nothing everything anything
correct horse battery staple dragon monkey shadow sunshine princess football baseball welcome letmein
qwerty hello world hunter trustno freedom whatever summer winter spring autumn fall red green blue black
white orange yellow purple silver golden gold apple banana cherry tiger lion eagle wolf bear cat dog fish
bird star moon sun sky sea fire water earth wind stone rock tree river mountain city country king queen
`.trim().split(/\s+/))
const WORD_BITS = Math.log2(WORDS.size)
const LONGEST_WORD = Math.max(...[...WORDS].map((w) => w.length))

const log2 = Math.log2

function alphabetBits (secret: string): number {
  if (/^[0-9a-f]+$/.test(secret) || /^[0-9A-F]+$/.test(secret)) return 4
  let size = 0
  if (/[a-z]/.test(secret)) size += 26
  if (/[A-Z]/.test(secret)) size += 26
  if (/[0-9]/.test(secret)) size += 10
  if (/[ -/:-@[-`{-~]/.test(secret)) size += 33
  if (/[^ -~]/.test(secret)) size += 100
  return log2(size)
}

export function estimateEntropy (secret: string): number {
  const chars = [...secret].slice(0, MAX_CHECKED)
  const text = chars.join('')
  const charBits = alphabetBits(text)
  const cost = new Array<number>(chars.length + 1).fill(Infinity)
  cost[0] = 0
  const better = (to: number, bits: number) => { if (bits < (cost[to] ?? Infinity)) cost[to] = bits }
  for (let i = 0; i < chars.length; i++) {
    const here = cost[i] ?? Infinity
    const char = chars[i] ?? ''
    const seen = chars.slice(0, i)
    better(i + 1, here + (i > 0 && (chars[i - 1] === char || (/[^A-Za-z0-9]/.test(char) && seen.includes(char))) ? 2 : charBits))
    for (const [length, bits] of pieces(chars, text, i, charBits)) better(i + length, here + bits)
  }
  return cost[chars.length] ?? 0
}

function pieces (chars: string[], text: string, i: number, charBits: number): Array<[number, number]> {
  const found: Array<[number, number]> = []
  const lengthBits = (length: number) => log2(length) + 1
  const digits = /^[0-9]+/.exec(chars.slice(i).join(''))?.[0].length ?? 0
  for (let length = 1; length <= digits; length++) found.push([length, length * log2(10)])
  const year = Number(chars.slice(i, i + 4).join(''))
  if (digits >= 4 && year >= 1950 && year <= 2049) found.push([4, 7])
  const run = Math.max(sequenceLength(chars, i), keyboardLength(chars, i))
  for (let length = MIN_PIECE; length <= run; length++) found.push([length, Math.min(charBits, log2(KEYS)) + lengthBits(length)])
  for (let length = MIN_PIECE - 1; length <= Math.min(LONGEST_WORD, chars.length - i); length++) {
    const word = chars.slice(i, i + length).join('')
    const lower = word.toLowerCase()
    if (!WORDS.has(lower)) continue
    const shape = word === lower ? 0 : word === lower[0]?.toUpperCase() + lower.slice(1) || word === word.toUpperCase() ? 1 : length
    found.push([length, WORD_BITS + shape])
  }
  const repeated = repeatLength(text, chars, i)
  for (let length = MIN_PIECE; length <= repeated; length++) found.push([length, log2(i) + lengthBits(length)])
  return found
}

/** The length of the run from `i` whose code points step by one constant of -2 to 2 (`aaa` is a repeat, not this). */
function sequenceLength (chars: string[], i: number): number {
  const step = (chars[i + 1]?.codePointAt(0) ?? NaN) - (chars[i]?.codePointAt(0) ?? NaN)
  if (!(Math.abs(step) >= 1 && Math.abs(step) <= 2)) return 0
  let end = i + 1
  while (end + 1 < chars.length && (chars[end + 1]?.codePointAt(0) ?? NaN) - (chars[end]?.codePointAt(0) ?? NaN) === step) end++
  return end - i + 1
}

/** The length of the run from `i` along one keyboard row, either way. */
function keyboardLength (chars: string[], i: number): number {
  let best = 0
  for (const row of KEYBOARD_ROWS) {
    for (const way of [1, -1]) {
      let length = 0
      let at = row.indexOf(chars[i] ?? '')
      while (at !== -1 && row[at] === chars[i + length]) {
        length++
        at += way
        if (at < 0 || at >= row.length) break
      }
      best = Math.max(best, length)
    }
  }
  return best
}

/** The longest piece from `i` that also starts earlier (it may overlap itself: `aaaaaa`). */
function repeatLength (text: string, chars: string[], i: number): number {
  let best = 0
  for (let start = 0; start < i; start++) {
    let length = 0
    while (i + length < chars.length && chars[start + length] === chars[i + length]) length++
    best = Math.max(best, length)
  }
  return text.length === 0 ? 0 : best
}
