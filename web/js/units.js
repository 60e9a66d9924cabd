/*
 * units.js - PCP units as people read them.
 *
 * pmproxy gives a metric's units as pmUnitsStr(3) prints them: "byte",
 * "Kbyte", "nanosec", "millisec", "count", "count / sec", "byte / sec",
 * "none", "count x 10^3".  Stap.units.parse() turns that into a dimension
 * and the factor to the dimension's base (bytes, nanoseconds, ones);
 * Stap.units.format() prints a value (or a rate: per second) scaled:
 * bytes as B, KiB, MiB, ...; time as ns, us, ms, s; counts with k, M, G.
 */
(function (Stap) {
	'use strict';

	const SPACE = { byte: 1, Kbyte: 1024, Mbyte: 1024 ** 2, Gbyte: 1024 ** 3,
		Tbyte: 1024 ** 4, Pbyte: 1024 ** 5, Ebyte: 1024 ** 6 };
	const TIME = { nanosec: 1, microsec: 1e3, millisec: 1e6, sec: 1e9,
		min: 60e9, hour: 3600e9 };
	const TIME_PER_SEC = { nanosec: 1e-9, microsec: 1e-6, millisec: 1e-3, sec: 1,
		min: 60, hour: 3600 };

	/* "count x 10^3" -> { dim: 'count', factor: 1000, per: 1 } */
	function parse(str) {
		const u = { dim: 'none', factor: 1, per: 1, text: str || 'none' };
		let num = (str || 'none').trim();
		const slash = num.indexOf(' / ');

		if (slash >= 0) {
			const den = num.slice(slash + 3).trim();
			num = num.slice(0, slash).trim();
			if (!(den in TIME_PER_SEC))
				return { dim: 'other', factor: 1, per: 1, text: str };
			u.per = TIME_PER_SEC[den];	/* value per den = value / per per second */
		}
		const scale = num.match(/^count x 10\^(-?\d+)$/);
		if (num in SPACE) {
			u.dim = 'space';
			u.factor = SPACE[num];
		} else if (num in TIME) {
			u.dim = 'time';
			u.factor = TIME[num];
		} else if (num === 'count') {
			u.dim = 'count';
		} else if (scale) {
			u.dim = 'count';
			u.factor = 10 ** Number(scale[1]);
		} else if (num !== 'none' && num !== '') {
			u.dim = 'other';
		}
		if (slash >= 0 && u.dim !== 'other')
			u.rate = true;
		return u;
	}

	function digits(v) {
		const a = Math.abs(v);

		if (a === 0)
			return '0';
		if (a >= 100 || Number.isInteger(v) && a < 1e15)
			return Number.isInteger(v) ? String(v) : v.toFixed(0);
		if (a >= 10)
			return v.toFixed(1);
		if (a >= 0.01)
			return v.toFixed(2);
		return v.toExponential(1);
	}

	function pick(v, steps) {
		let i = 0;

		while (i + 1 < steps.length && Math.abs(v) >= steps[i + 1][0])
			i++;
		return digits(v / steps[i][0]) + ' ' + steps[i][1];
	}

	const SPACE_STEPS = [[1, 'B'], [1024, 'KiB'], [1024 ** 2, 'MiB'], [1024 ** 3, 'GiB'],
		[1024 ** 4, 'TiB'], [1024 ** 5, 'PiB']];
	const TIME_STEPS = [[1, 'ns'], [1e3, 'us'], [1e6, 'ms'], [1e9, 's']];
	const COUNT_STEPS = [[1, ''], [1e3, 'k'], [1e6, 'M'], [1e9, 'G'], [1e12, 'T']];

	/*
	 * V in units U, scaled; RATE: V is per second (a counter's rate).
	 * Values below 1000 keep their digits: "17", "3.25 k", "1.5 MiB/s".
	 */
	function format(v, u, rate) {
		if (v === null || v === undefined || Number.isNaN(v))
			return '-';
		if (typeof v !== 'number')
			return String(v);
		const persec = rate || u.rate;
		const base = v * u.factor / (u.rate ? u.per : 1);
		let s;

		switch (u.dim) {
		case 'space': s = pick(base, SPACE_STEPS); break;
		case 'time': s = pick(base, TIME_STEPS); break;
		case 'count': s = pick(base, COUNT_STEPS).trim(); break;
		case 'none': s = pick(v, COUNT_STEPS).trim(); break;
		default: return digits(v) + ' ' + u.text + (rate ? '/s' : '');
		}
		return persec ? s.trim() + '/s' : s.trim();
	}

	/* V in units U, in the dimension's base (bytes, ns, ones), for scales. */
	function toBase(v, u) {
		return u.dim === 'none' || u.dim === 'other' ? v : v * u.factor;
	}

	Stap.units = { parse, format, toBase };
})(window.Stap = window.Stap || {});
