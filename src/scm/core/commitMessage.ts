/**
 * The request that writes a commit message, and its answer cleaned to what the Source Control
 * box takes. The repository's own recent subjects show its style (conventional commits, a ticket
 * prefix, tense, length); its rules files say the rest.
 */
import type { ChatCompletionRequest } from '../../gateway/resources/chat';

/** Tokens of diff a commit message is written from (about 24,000 characters of code). */
export const COMMIT_DIFF_TOKENS = 6_000;
const MAX_MESSAGE_TOKENS = 400;

export interface CommitInput {
  model: string;
  /** The bounded diff (`boundedDiff`). */
  diff: string;
  /** Whether the diff is the staged changes or, with nothing staged, all of them. */
  staged: boolean;
  /** The subjects of the repository's last commits, newest first. */
  recentSubjects: string[];
  /** The project's rules files as the chat's system prompt carries them (may be empty). */
  rules: string;
}

export const COMMIT_INSTRUCTION = 'Write a commit message for these changes.';

export function commitRequest(i: CommitInput): ChatCompletionRequest {
  const system = [
    'You write git commit messages. Answer with the message only: no preamble, no code fence, no quotes.',
    "The first line is a subject of at most 72 characters in the style of the repository's recent subjects (the same prefixes, tense, capitalisation and language). Then, if the change needs it, a blank line and a short body saying why, wrapped at 72 characters.",
    'Describe what the diff changes; do not invent what it does not show. Files listed as not shown still changed.',
    ...(i.rules ? ['', i.rules] : []),
  ].join('\n');
  const subjects = i.recentSubjects.length ? i.recentSubjects.map((s) => `- ${s}`).join('\n') : '- (no commits yet)';
  const user = [
    COMMIT_INSTRUCTION,
    '',
    `<recent_subjects>\n${subjects}\n</recent_subjects>`,
    '',
    `<diff kind="${i.staged ? 'staged' : 'all changes'}">\n${i.diff}</diff>`,
  ].join('\n');
  return {
    model: i.model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: MAX_MESSAGE_TOKENS,
    temperature: 0.2,
  };
}

/** The answer as a commit message: a code fence or quotes around it taken off, trailing spaces trimmed. */
export function cleanCommitMessage(text: string): string {
  let t = text.trim();
  const fence = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(t);
  if (fence) t = fence[1].trim();
  if (/^(["'`]).*\1$/s.test(t) && !t.slice(1, -1).includes(t[0])) t = t.slice(1, -1).trim();
  t = t.replace(/^(commit message|subject)\s*:\s*/i, '');
  return t
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n');
}

/** The subject of each commit message (its first line). */
export function subjectsOf(messages: readonly string[]): string[] {
  return messages.map((m) => m.split('\n')[0].trim()).filter(Boolean);
}
