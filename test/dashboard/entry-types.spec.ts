import { describeEntryTypes } from '../support/entry-types.js';

/** An app's use of the status page: its options are type-checked against the built declarations. */
const APP = `
import { Module } from '@nestjs/common';
import { SchedulerLockModule } from 'nest-scheduler-lock';
import { SchedulerLockDashboardModule, type DashboardAccess } from 'nest-scheduler-lock/dashboard';

interface SessionRequest {
  readonly session?: { readonly user?: string };
}

function authorize(request: SessionRequest): DashboardAccess | false {
  return request.session?.user ? { actor: request.session.user } : false;
}

@Module({
  imports: [
    SchedulerLockModule.forRoot({ redis: 'redis://127.0.0.1:6379', defaultLockAtMostFor: '10m' }),
    SchedulerLockDashboardModule.forRoot({ path: '/ops/locks', authorize, readOnly: true }),
  ],
})
export class AppModule {}
`;

describeEntryTypes('nest-scheduler-lock/dashboard', APP, 'dist/cjs/dashboard/dashboard-options.d.ts');
