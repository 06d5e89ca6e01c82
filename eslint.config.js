import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// The repository's structural rules (docs/architecture.md) as lint rules, plus a few
// correctness checks. The parser runs without type information, so a lint of the whole
// tree takes seconds; type errors are the type-checker's job (npm run typecheck).

/** Import sources that reach into another package's sources instead of its entry points. */
const reachIntoSrc = [
  {
    regex: '^(\\.\\./)+((packages|apps)/)?[^./][^/]*/src(/|$)',
    message: 'Import the package by name (@fenceline/...); add what you need to its entry point, not a path into its src/.',
  },
  {
    regex: '^@fenceline/[^/]+/src(/|$)',
    message: "Import the package's entry point; add what you need to its exports instead of reaching into src/.",
  },
];

/** The database drivers: only packages/db talks to PostgreSQL (architecture.md, "SQL only in packages/db"). */
const databaseDrivers = [
  {
    regex: '^(postgres|drizzle-orm)(/|$)',
    message: 'Only packages/db talks to PostgreSQL; use the Store interface or an export of @fenceline/db.',
  },
];

/**
 * The scheduling core is pure logic: no IO, no store implementation, no UI. Whatever it
 * needs from the world (clock, store, timers) is handed to it.
 */
const coreOutsideWorld = [
  {
    regex: '^(node:.*|fs|fs/.*|net|http|https|http2|dgram|tls|dns|os|child_process|worker_threads|perf_hooks)$',
    message: 'packages/core does no IO: take what you need through an interface passed in from outside.',
  },
  {
    regex: '^@fenceline/(db|sim|scheduler|worker|web|telemetry)(/|$)',
    message: 'packages/core depends on no other package of the repository; they depend on it.',
  },
  {
    regex: '^@opentelemetry/',
    message: 'packages/core records spans through its tracing port (src/tracing.ts); packages/telemetry binds it to OpenTelemetry.',
  },
  {
    regex: '^(react|react-dom|next)(/|$)',
    message: 'packages/core has no UI; the console imports the core, not the other way round.',
  },
];

/**
 * The worker reaches the scheduler only through its API, never the store. Of the
 * scheduler it takes only the type of the wire contract (@fenceline/scheduler/wire).
 */
const workerOnlyThroughApi = [
  {
    regex: '^@fenceline/db(/|$)',
    message: "The worker talks to the scheduler's API only; it never opens the store.",
  },
  {
    regex: '^@fenceline/scheduler(?!/wire$)(/|$)',
    message: 'The worker takes only the type of the wire contract from the scheduler: import type from @fenceline/scheduler/wire.',
  },
];

/** The wire contract is a type: a value import would load the scheduler into the worker. */
const wireTypeOnly = {
  'no-restricted-syntax': [
    'error',
    {
      selector: "ImportDeclaration[source.value='@fenceline/scheduler/wire'][importKind!='type']",
      message: 'Import the wire contract with `import type`: the worker loads nothing of the scheduler.',
    },
  ],
};

/** The console reads the store and the core; the scheduler and worker processes are not its libraries. */
const consoleNotProcesses = [
  {
    regex: '^@fenceline/(scheduler|worker)(/|$)',
    message: 'The console does not import the scheduler or the worker; it reads the store through @fenceline/db/console.',
  },
  {
    regex: '^(\\.\\./)+(apps/)?(scheduler|worker)(/|$)',
    message: 'The console does not import the scheduler or the worker.',
  },
];

/**
 * @fenceline/effects is imported by the user's task code and services: it depends on no
 * other package of the repository, so it can be installed alone. It talks to the user's
 * database (not the scheduler's store), which is why the database drivers are allowed in it.
 */
const effectsStandsAlone = [
  {
    regex: '^@fenceline/',
    message: '@fenceline/effects depends on no other package of the repository: task code installs it alone.',
  },
];

/**
 * The libraries under the apps (db, sim, telemetry) are imported by them, never the other
 * way round: an app is a process with its own configuration, not a library.
 */
const noApps = [
  {
    regex: '^@fenceline/(scheduler|worker|web|cli)(/|$)',
    message: 'The packages under packages/ do not import an app; the apps import them.',
  },
  {
    regex: '^(\\.\\./)+apps(/|$)',
    message: 'The packages under packages/ do not import an app; the apps import them.',
  },
];

/**
 * The simulator runs the production scheduler and worker over its in-memory store; it
 * never opens the SQL store, so a simulated run depends on no database.
 */
const simWithoutDatabase = [
  {
    regex: '^@fenceline/db(/|$)',
    message: 'packages/sim runs on its in-memory store (MemoryStore); it never imports the SQL store.',
  },
  {
    regex: '^(\\.\\./)+(packages/)?db(/|$)',
    message: 'packages/sim runs on its in-memory store (MemoryStore); it never imports the SQL store.',
  },
];

/** The console reads through @fenceline/db/console; the bulk inserts of @fenceline/db/testing are for tests. */
const consoleNotTestSupport = [
  {
    regex: '^@fenceline/db/testing(/|$)',
    message: '@fenceline/db/testing fills databases for tests; the console reads through @fenceline/db/console and writes through the Store.',
  },
];

const restrict = (...groups) => ['error', { patterns: groups.flat() }];

/** Ambient time, randomness and timers: the core gets all of them from outside. */
const ambientTime = {
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: 'packages/core takes the time from its Clock, never from Date.now().' },
    { object: 'Math', property: 'random', message: 'packages/core takes randomness from outside (a seeded source), never Math.random().' },
    { object: 'performance', property: 'now', message: 'packages/core takes the time from its Clock, never from performance.now().' },
    { object: 'globalThis', property: 'setTimeout', message: 'packages/core takes its timers from outside.' },
    { object: 'globalThis', property: 'setInterval', message: 'packages/core takes its timers from outside.' },
  ],
  'no-restricted-syntax': [
    'error',
    { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'packages/core takes the time from its Clock, never from new Date().' },
    { selector: "CallExpression[callee.name='Date']", message: 'packages/core takes the time from its Clock, never from Date().' },
  ],
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'packages/core takes its timers from outside.' },
    { name: 'setInterval', message: 'packages/core takes its timers from outside.' },
    { name: 'setImmediate', message: 'packages/core takes its timers from outside.' },
  ],
};

export default defineConfig(
  {
    ignores: ['**/node_modules/**', '**/.next/**', '**/*.d.ts', 'bench/results/**', 'e2e/artifacts/**', 'test-results/**', 'playwright-report/**', '.data/**', '.scratch/**'],
  },
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'smart'],
      'no-debugger': 'error',
      'no-dupe-else-if': 'error',
      'no-duplicate-case': 'error',
      'no-self-assign': 'error',
      'no-self-compare': 'error',
      'no-unsafe-finally': 'error',
      'no-cond-assign': 'error',
      'no-sparse-arrays': 'error',
      'no-empty-pattern': 'error',
      'no-async-promise-executor': 'error',
      'no-compare-neg-zero': 'error',
      'use-isnan': 'error',
      'no-unsafe-negation': 'error',
      'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers),
    },
  },
  // Each block below restates the whole import rule for its part of the tree: ESLint
  // replaces a rule's options per matching block rather than merging them.
  { files: ['packages/core/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers, coreOutsideWorld) } },
  { files: ['packages/db/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, noApps) } },
  { files: ['packages/sim/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers, simWithoutDatabase, noApps) } },
  { files: ['packages/telemetry/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers, noApps) } },
  // The effects library writes to the user's own database (its ledger sits next to the
  // user's data); its tests borrow the test databases of @fenceline/db.
  { files: ['packages/effects/src/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, effectsStandsAlone) } },
  // So do the tasks that use it and the tests that read the user's side of their effects.
  {
    files: ['packages/effects/test/**', 'tools/chaos/effects/**', 'examples/**', 'e2e/run-effects.test.ts', 'e2e/src/effect-tasks.ts'],
    rules: { 'no-restricted-imports': restrict(reachIntoSrc) },
  },
  { files: ['apps/worker/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers, workerOnlyThroughApi), ...wireTypeOnly } },
  // The worker's own tests may stand a real scheduler server up to talk to; the worker itself still may not.
  { files: ['apps/worker/test/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers) } },
  { files: ['apps/web/**'], rules: { 'no-restricted-imports': restrict(reachIntoSrc, databaseDrivers, consoleNotProcesses, consoleNotTestSupport) } },
  { files: ['packages/core/src/**'], ignores: ['packages/core/src/testing/**'], rules: ambientTime },
);
