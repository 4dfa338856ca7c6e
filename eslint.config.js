// The lint of the front end (web/static/js): ES modules run as they are written, in the
// browser, with no build step. `make lint` runs it with the versions package-lock.json pins.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["web/static/js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: globals.browser,
    },
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
      "no-implicit-globals": "error",
      "no-shadow": "error",
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
      "no-param-reassign": "error",
      "no-console": "error",
      "object-shorthand": "error",
      "consistent-return": "error",
      curly: ["error", "multi-line"],
    },
  },
];
