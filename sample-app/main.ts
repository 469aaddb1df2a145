import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { config } from './config.js';

/**
 * One instance of the sample app. Start several (each with its own INSTANCE_ID) against the same
 * store (Redis, or PostgreSQL with DATABASE_URL) and every locked job still runs once per tick across them;
 * `npm run demo` does just that.
 */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule);
  // On SIGTERM/SIGINT: stop the schedules, release the locks and close the store's connections.
  app.enableShutdownHooks();
  // Tells a parent process, when there is one (the cluster demo), that the jobs are scheduled.
  process.send?.('ready');
  new Logger('SampleApp').log(`Instance "${config.instanceId}" is running its jobs (${config.storeShown})`);
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
