// CHANGELOG.md follows Keep a Changelog: a user reads one release's changes under one heading of
// each kind, not a second `### Fixed` further down that a reader who stopped at the first misses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './blocks.js';

const KINDS = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];
const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
const releases = changelog.split(/^## /m).slice(1).map((section) => ({
  title: section.slice(0, section.indexOf('\n')),
  kinds: [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]!),
  // Each entry: a "- " line and the indented lines that continue it.
  entries: [...section.matchAll(/^- .*(?:\n {2}.*)*/gm)].map((m) => m[0]),
  // An entry followed by a blank line and another entry: the start of the second, for the message.
  loose: [...section.matchAll(/^(?:- | {2}).*\n\n(- .{0,60})/gm)].map((m) => m[1]),
}));

describe('CHANGELOG.md', () => {
  it('has an Unreleased section', () => {
    expect(releases[0]?.title).toBe('[Unreleased]');
  });

  it.each(releases.map((r) => [r.title, r] as const))('%s has one heading for each kind of change (Added, Changed, Fixed…)', (_title, release) => {
    expect(release.kinds.every((kind) => KINDS.includes(kind)), release.kinds.join(', ')).toBe(true);
    expect(release.kinds).toEqual([...new Set(release.kinds)]);
  });

  it.each(releases.map((r) => [r.title, r] as const))('%s keeps each list tight: no blank line between two entries (Markdown would make it a loose list)', (_title, release) => {
    expect(release.loose).toEqual([]);
  });

  it('wraps its lines at 100 characters, as a terminal or a diff shows them whole', () => {
    const long = changelog.split('\n').filter((line) => line.length > 100);
    expect(long).toEqual([]);
  });

  it.each(releases.map((r) => [r.title, r] as const))('%s lists each entry once', (_title, release) => {
    const twice = release.entries.filter((entry, i) => release.entries.indexOf(entry) !== i);
    expect(twice).toEqual([]);
  });
});
