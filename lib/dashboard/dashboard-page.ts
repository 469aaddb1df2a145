import { createHash } from 'node:crypto';
import { DASHBOARD_HTML } from './dashboard-html.generated.js';

/**
 * The status page, `dashboard.html` beside this file (embedded as a string at build time by
 * scripts/embed-assets.mjs, so loading this module reads no file, whichever way the package is loaded), and
 * the Content-Security-Policy it is served with: its one inline script and style are allowed by their SHA-256,
 * requests may go to the page's own origin only, and nothing else may load, run, frame it or submit a form.
 */
export const DASHBOARD_PAGE = loadPage(DASHBOARD_HTML);

function loadPage(html: string): { html: string; contentSecurityPolicy: string } {
  const script = inline(html, 'script');
  const style = inline(html, 'style');
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src '${sha256(script)}'`,
    `style-src '${sha256(style)}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, contentSecurityPolicy };
}

/** The text of the page's one `<tag>` element. */
function inline(html: string, tag: 'script' | 'style'): string {
  const elements = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))];
  if (elements.length !== 1) throw new Error(`dashboard.html must have exactly one <${tag}>, found ${elements.length}`);
  return elements[0][1];
}

function sha256(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}
