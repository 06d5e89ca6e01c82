import { teeThisProcess } from '../../../../test/support/run-logs';

// The console's tests run its server code (route handlers, tRPC procedures, the error log)
// inside the test worker rather than in a process of its own, so what the worker writes is
// the console's log: it goes into the run's log folder for the sweep at the end of the run.
teeThisProcess('web-console');
