import type { Rule } from 'eslint';

/** The lint rule that keeps shown text translatable (l10n-rule.mjs). */
export declare const l10nRule: Rule.RuleModule;
