/**
 * @module relay/admission/client-address
 * Whose connection this is, for the per-address limits (docs/operations.md "Edge limits"). Directly
 * exposed (`--trusted-proxy-depth 0`, the default) it is the TCP peer and `X-Forwarded-For` is
 * ignored: any client can write that header. Behind N trusted proxies, each appending the address
 * it saw, the client is the Nth entry from the right; entries further left were written by the
 * client itself and are never trusted.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxyDepth: number,
): string {
  const direct = normalise(peer ?? 'unknown');
  if (trustedProxyDepth === 0 || forwardedFor === undefined) return direct;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  // Fewer hops than proxies: the leftmost is the furthest one any trusted proxy saw.
  const hop = hops[Math.max(0, hops.length - trustedProxyDepth)];
  return hop === undefined ? direct : normalise(hop);
}

/** `::ffff:1.2.3.4` (IPv4 on a dual-stack socket) and `1.2.3.4` are one client. */
function normalise(address: string): string {
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address.toLowerCase();
}
