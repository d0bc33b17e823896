import type { FeatureHost } from '../../shell/featureHost';
import { ProjectRules } from '../../runtime/host/projectRules';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { CommitMessageWriter } from './commitMessage';
import { APPLY_FIX_COMMAND, ChangeReviewer, DISMISS_COMMAND } from './review';
import { FeatureSpend } from '../../runtime/host/featureSpend';

/** The Usage view's series for these uses (carved out of their model's spend). */
export const COMMIT_SERIES = 'Commit messages';
export const REVIEW_SERIES = 'Reviews';

export const COMMIT_COMMAND = 'modelGateway.scm.writeCommitMessage';
export const REVIEW_COMMAND = 'modelGateway.review.changes';

export interface ScmFeature {
  commits: CommitMessageWriter;
  reviewer: ChangeReviewer;
  /** Each use's spend, by its series name. */
  spend: FeatureSpend[];
}

/** Commit messages in the Source Control box and reviews of a change, through the gateway. */
export function activateScm(host: FeatureHost): ScmFeature {
  const { services, context } = host;
  const rules = host.own(new ProjectRules(workspaceGuard));
  const commitSpend = new FeatureSpend(COMMIT_SERIES, 'modelGateway.scm.commitLedger', context.globalState, services);
  const reviewSpend = new FeatureSpend(REVIEW_SERIES, 'modelGateway.scm.reviewLedger', context.globalState, services);
  const commits = host.own(new CommitMessageWriter(services, rules, commitSpend));
  const reviewer = host.own(new ChangeReviewer(services, rules, reviewSpend));
  // Both spend on the person's account: called with anything but what VS Code's own Source Control
  // view or palette passes (another extension's arguments), they ask first.
  host.command(COMMIT_COMMAND, (...args: unknown[]) => commits.write(...args));
  host.command(REVIEW_COMMAND, (...args: unknown[]) => reviewer.review(...args));
  host.command(APPLY_FIX_COMMAND, (thread?: unknown) => reviewer.applyFix(thread));
  host.command(DISMISS_COMMAND, (thread?: unknown) => reviewer.dismiss(thread));
  return { commits, reviewer, spend: [commitSpend, reviewSpend] };
}
