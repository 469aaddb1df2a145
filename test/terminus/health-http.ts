import type { SchedulerApp } from '../support/scheduler-app.js';

/** What Terminus sends for GET /health. */
export interface HealthBody {
  status: 'ok' | 'error';
  details: { locks: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** GET /health: the HTTP status and the body Terminus sent. */
export async function getHealth(app: SchedulerApp): Promise<{ status: number; text: string; body: HealthBody }> {
  const response = await fetch(`${app.url}/health`);
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as HealthBody };
}
