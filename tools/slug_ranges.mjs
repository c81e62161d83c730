// The code point ranges github-slugger's regex removes, as JSON [[first, last], ...]:
//   node tools/slug_ranges.mjs path/to/github-slugger/regex.js > ranges.json
// (github-slugger 2.0.0's regex.js saved with an .mjs name). core/anchors.py's
// character class is written from this list (the surrogates left out: text
// decoded from UTF-8 holds none).
import { pathToFileURL } from 'node:url'

const { regex } = await import(pathToFileURL(process.argv[2]).href)
const whole = new RegExp('^(?:' + regex.source + ')$')
const out = []
let start = -1
for (let cp = 0; cp <= 0x110000; cp++) {
  const hit = cp < 0x110000 && whole.test(String.fromCodePoint(cp))
  if (hit && start < 0) start = cp
  if (!hit && start >= 0) { out.push([start, cp - 1]); start = -1 }
}
console.log(JSON.stringify(out))
