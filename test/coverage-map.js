/**
 * tap's coverage map (.taprc): whichever test runs, coverage is measured over the service's own
 * code, never over bench/ (the soak test imports it) or the tests and their helpers.
 */
export default function coverageMap () {
  return ['src/**/*.ts', 'plugins/**/*.ts', 'routes/**/*.ts', 'schemas/**/*.ts']
}
