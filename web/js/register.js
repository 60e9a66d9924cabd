/*
 * register.js - the form that starts a script: its text stored into
 * stap.control.register through pmproxy's /pmapi/store, in the page's
 * REST context, whose next fetch of stap.control.register gives the
 * outcome (pmdastap(1): the script's name, or the diagnostics with
 * file:line:col, or why the store was refused).  Shown while
 * stap.info.registration says registration is enabled.  Once registered,
 * the outcome follows the script: starting, then running with its
 * metrics named (or failed, with its error).
 *
 * pmcd tells pmdastap the user of a client only over its local socket:
 * through pmproxy, registration works with host "local:" (the user is
 * pmproxy's), and over TCP the PMDA refuses an unknown user.
 *
 * #register-outcome carries data-state (sending, refused, error,
 * registered, running, failed) and data-script, for tests.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;

	class Registration {
		constructor(dash) {
			this.dash = dash;
			this.box = document.getElementById('register');
			this.form = document.getElementById('register-form');
			this.text = this.form.script;
			this.note = document.getElementById('register-note');
			this.outcome = document.getElementById('register-outcome');
			this.pending = '';
			this.form.addEventListener('submit', (ev) => { ev.preventDefault(); this.submit(); });
		}

		say(state, text, script) {
			this.outcome.hidden = false;
			this.outcome.dataset.state = state;
			this.outcome.dataset.script = script || '';
			if (typeof text === 'string')
				this.outcome.textContent = text;
			else
				this.outcome.replaceChildren(...text);
		}

		/* stap.info.registration: 1 enabled, 0 disabled, undefined unknown */
		enabled(v) {
			const on = v === 1 || v === '1';

			this.box.dataset.enabled = String(on);
			this.form.hidden = !on;
			this.note.textContent = on ? 'pmdastap accepts scripts from users in its allowed_users; ' +
				'pmcd knows the user only over its local socket (host local:)' :
				'registration is disabled in pmdastap\'s configuration ([registration] enabled)';
		}

		async submit() {
			const rest = this.dash.rest;
			const text = this.text.value;
			let refused = '';

			if (!text.trim())
				return;
			this.pending = '';
			this.say('sending', 'registering\u2026');
			try {
				await rest.get('/pmapi/store', { name: 'stap.control.register', value: text });
			} catch (e) {
				if (e.kind !== 'pmapi') {
					this.say('error', 'could not register: ' + e.message);
					return;
				}
				refused = e.message;
			}
			let said = '';
			try {
				const j = await rest.fetch(['stap.control.register']);
				const v = j.values && j.values[0] && j.values[0].instances[0];
				said = v && typeof v.value === 'string' ? v.value.trim() : '';
			} catch (e) {
				said = '';
			}
			if (refused) {
				this.say('refused', said || refused);
				return;
			}
			this.pending = said;
			this.say('registered', 'registered as ' + said + ': compiling and starting\u2026', said);
			this.dash.needMeta = true;
		}

		/* each tick: where the script registered last is now */
		update(meta, values) {
			const name = this.pending;

			if (!name)
				return;
			const st = (values.get('stap.scripts.status') || new Map()).get(name);
			const err = (values.get('stap.scripts.error') || new Map()).get(name);
			const mine = [...meta.keys()].filter((n) => n.startsWith('stap.' + name + '.')).sort();
			if (st === 'running' && mine.length) {
				this.say('running', [name + ' is running; its metrics: ',
					...mine.map((n) => el('a', { href: '#script-' + name, class: 'metric' }, n)),
				], name);
			} else if (st === 'failed' || st === 'refused' || st === 'exited') {
				this.say('failed', name + ' ' + st + (err ? ': ' + err : ''), name);
			} else if (st === 'running') {
				this.dash.needMeta = true;	/* its metrics are new */
			} else if (st) {
				this.say('registered', 'registered as ' + name + ': ' + st + '\u2026', name);
			}
		}
	}

	Stap.Registration = Registration;
})(window.Stap = window.Stap || {});
