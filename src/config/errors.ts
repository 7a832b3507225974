/** A configuration value that cannot be used; `main` prints `message` on one line and exits with code 2. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}
