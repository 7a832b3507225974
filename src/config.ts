/** The configuration lives in `src/config/`, split by concern; this path stays for the modules that import it. */
export * from './config/index.js';
