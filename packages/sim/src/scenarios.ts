import fanout from '../scenarios/fanout.json';
import leaderCrash from '../scenarios/leader-crash.json';
import missionDay from '../scenarios/mission-day.json';
import pausedWorker from '../scenarios/paused-worker.json';
import swarm from '../scenarios/swarm.json';
import type { ScenarioFile } from './scenario/run';

/** The named scenarios, as written in packages/sim/scenarios/. */
export const SCENARIOS: Record<string, ScenarioFile> = {
  fanout: fanout as ScenarioFile,
  'leader-crash': leaderCrash as ScenarioFile,
  'paused-worker': pausedWorker as ScenarioFile,
  'mission-day': missionDay as ScenarioFile,
  swarm: swarm as ScenarioFile,
};
