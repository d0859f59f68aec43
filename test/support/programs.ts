/**
 * The system programs the tests drive, in one table: `npm test`'s first step
 * (scripts/provision.mjs) installs what is missing, and the tests launch each from the same path.
 * Each is found at its variable's path when the variable is set, else at its Debian path.
 */
export interface Program {
  /** What a person reads: "Chromium". */
  name: string;
  /** The tests that need it. */
  usedBy: string;
  /** The variable that points the tests at the binary. */
  variable: string;
  /** Where Debian's package puts it. */
  debianPath: string;
  /** The Debian package. */
  apt: string;
}

/** Debian's directory for this machine's libraries (multiarch): x86_64-linux-gnu, or aarch64-linux-gnu on ARM. */
const MULTIARCH = `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`;

export const PROGRAMS = {
  chromium: { name: 'Chromium', usedBy: 'the browser tests', variable: 'CHROMIUM_PATH', debianPath: '/usr/bin/chromium', apt: 'chromium' },
  firefox: { name: 'Firefox', usedBy: 'the browser tests', variable: 'FIREFOX_PATH', debianPath: '/usr/bin/firefox-esr', apt: 'firefox-esr' },
  webkit: { name: 'WebKitWebDriver', usedBy: 'WebKit in the runtime matrix', variable: 'WEBKIT_DRIVER', debianPath: '/usr/bin/WebKitWebDriver', apt: 'webkit2gtk-driver' },
  // WebKitGTK has no headless mode: it draws on a virtual X display.
  xvfb: { name: 'Xvfb', usedBy: 'WebKit in the runtime matrix', variable: 'XVFB_PATH', debianPath: '/usr/bin/Xvfb', apt: 'xvfb' },
  redis: { name: 'redis-server', usedBy: 'the Redis tests', variable: 'REDIS_SERVER', debianPath: '/usr/bin/redis-server', apt: 'redis-server' },
  // Preloaded into the tests' redis-server, so that a test moves Redis' clock instead of waiting for it.
  libfaketime: { name: 'libfaketime', usedBy: 'the Redis tests', variable: 'LIBFAKETIME', debianPath: `/usr/lib/${MULTIARCH}/faketime/libfaketime.so.1`, apt: 'libfaketime' },
  python: { name: 'Python 3', usedBy: 'the Python suite against the CLI', variable: 'PYTHON3', debianPath: '/usr/bin/python3', apt: 'python3' },
} satisfies Record<string, Program>;

/** Where the tests find a program: its variable's value if set, else its Debian path. */
export function programPath(program: Program, env: Record<string, string | undefined> = process.env): string {
  return env[program.variable] || program.debianPath;
}
