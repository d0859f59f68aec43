/**
 * The TypeScript code blocks of the README and the guides, for the tests that keep them honest:
 * each with where it is, its code, and whether it is marked `<!-- run -->`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

export interface Block {
  doc: string;
  line: number;
  code: string;
  run: boolean;
  /** A file name for it: `README_md_L42.ts`. */
  name: string;
  /**
   * What the block says it prints, in order: the comment after each `console.log(…); // …` line
   * at the top level (`console.log(badKey); // check the API key (invalid_api_key)`).
   */
  printed: string[];
}

function extract(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const blocks: Block[] = [];
  const fence = /(<!-- run -->\n)?```ts\n([\s\S]*?)```/g;
  for (const match of text.matchAll(fence)) {
    const line = text.slice(0, match.index).split('\n').length;
    const code = match[2]!;
    const printed = [...code.matchAll(/^console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => m[1]!);
    blocks.push({ doc, line, code, run: Boolean(match[1]), name: `${doc.replace(/[/.]/g, '_')}_L${line}.ts`, printed });
  }
  return blocks;
}

/** Every TypeScript block of the README and the guides. */
export const codeBlocks = (): Block[] => DOCS.flatMap(extract);
