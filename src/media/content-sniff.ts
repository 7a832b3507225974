/**
 * The upload type the first bytes of a file announce, for the Content-Type an object is stored with (a network
 * downloading it from its signed address reads that header). Only the service's upload types are told apart;
 * anything else is `application/octet-stream`.
 */
export function sniffContentType(head: Buffer): string {
  const at = (offset: number, text: string) => head.subarray(offset, offset + text.length).toString('latin1') === text;
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (at(0, '\x89PNG\r\n\x1a\n')) return 'image/png';
  if (at(0, 'GIF87a') || at(0, 'GIF89a')) return 'image/gif';
  if (at(0, 'RIFF') && at(8, 'WEBP')) return 'image/webp';
  if (at(0, '\x1a\x45\xdf\xa3')) return 'video/webm';
  if (at(4, 'ftyp')) return at(8, 'qt  ') ? 'video/quicktime' : 'video/mp4';
  return 'application/octet-stream';
}
