import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SchedulerLockModuleOptions } from './interfaces/scheduler-lock-module-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableSchedulerLockModule,
  MODULE_OPTIONS_TOKEN: SCHEDULER_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: SCHEDULER_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SCHEDULER_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SchedulerLockModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createSchedulerLockOptions')
  .build();
