import { describe, expect, it } from 'vitest';
import { instanceOrigin } from '../../src/core/connections/instance-origin.js';

describe('the server a user names for a per-server network', () => {
  it('takes a host name or an origin, lower-cased, as an https origin unless a scheme is given', () => {
    expect(instanceOrigin('mastodon.social')).toBe('https://mastodon.social');
    expect(instanceOrigin(' Mastodon.Social ')).toBe('https://mastodon.social');
    expect(instanceOrigin('https://fosstodon.org/')).toBe('https://fosstodon.org');
    expect(instanceOrigin('https://social.example:8443')).toBe('https://social.example:8443');
    expect(instanceOrigin('http://127.0.0.1:4000')).toBe('http://127.0.0.1:4000');
  });

  it('refuses paths, queries, credentials, other schemes and blanks', () => {
    for (const bad of ['', '   ', 'https://mastodon.social/@alice', 'mastodon.social?x=1', 'https://user:pw@mastodon.social', 'ftp://mastodon.social', 'javascript:alert(1)', 'two words', 'https://mastodon.social#top']) {
      expect(instanceOrigin(bad), bad).toBeUndefined();
    }
  });
});
