/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: a round trip's components from its timestamps (contract in
 * tools/pingpong/pingpong.h). Pure arithmetic on what the client gathered.
 *
 * Every component is a difference of two readings of ONE host's clock, so the
 * breakdown holds between two machines whose clocks are not synchronised:
 *
 *   client  t_send ........ tx_ts                          rx_ts ....... t_app
 *             client send path |                              | client rx wake-up
 *   server                     |  rx_ts . t_app .. t_send .. tx_ts
 *                              |  rx wake-up  processing  send path
 *
 * The client's software timestamps and its clock readings are all CLOCK_REALTIME
 * (the kernel stamps with it), so the client's RTT here is t_app - t_send on that
 * clock too, and the remainder (wire, NIC, both stacks between the timestamps) is
 * that RTT less the five measured parts. A remainder below zero means the parts do
 * not fit inside the RTT (a clock step mid-round-trip): the sample is refused, not
 * clamped, so the sums stay honest.
 */
#include <string.h>

#include "tools/pingpong/pingpong.h"

int pp_bd_components(const struct pp_bd_sample *s, uint64_t comp[PP_NCOMP], uint64_t *rtt)
{
	uint64_t parts;

	if (!(s->have & PP_HAVE_TX))
		return PP_MISS_CLIENT_TX;
	if (!(s->have & PP_HAVE_RX))
		return PP_MISS_CLIENT_RX;
	if (!(s->have & PP_HAVE_SRV) || (s->have & PP_HAVE_SRV_RX_MISSING))
		return PP_MISS_SERVER_RX;
	if (!(s->have & PP_HAVE_SRV_SEND))
		return PP_MISS_SERVER_TX;
	if (!(s->have & PP_HAVE_SENT) || !(s->have & PP_HAVE_REPLY) || s->tx_ts < s->t_send ||
	    s->rx_ts < s->tx_ts || s->t_app < s->rx_ts)
		return PP_MISS_ORDER;
	*rtt = s->t_app - s->t_send;
	comp[PP_C_CLIENT_SEND] = s->tx_ts - s->t_send;
	comp[PP_C_SERVER_RX] = s->srv_rx;
	comp[PP_C_SERVER_PROC] = s->srv_proc;
	comp[PP_C_SERVER_SEND] = s->srv_send;
	comp[PP_C_CLIENT_RX] = s->t_app - s->rx_ts;
	parts = 0;
	for (int i = 0; i < PP_C_REMAINDER; i++)
		parts += comp[i];
	if (parts > *rtt)
		return PP_MISS_ORDER;
	comp[PP_C_REMAINDER] = *rtt - parts;
	return -1;
}

void pp_bd_init(struct pp_bd_acc *a)
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < PP_NCOMP; i++)
		bp_hist_init(&a->comp[i]);
	bp_hist_init(&a->rtt);
}

void pp_bd_add(struct pp_bd_acc *a, const struct pp_bd_sample *s)
{
	uint64_t comp[PP_NCOMP], rtt = 0;
	int miss;

	if (!s->measured)
		return;
	a->samples++;
	miss = pp_bd_components(s, comp, &rtt);
	if (miss >= 0) {
		a->miss[miss]++;
		return;
	}
	a->complete++;
	for (int i = 0; i < PP_NCOMP; i++)
		bp_hist_record(&a->comp[i], comp[i]);
	bp_hist_record(&a->rtt, rtt);
	a->rtt_mono_sum += s->rtt_mono;
}

void pp_bd_merge(struct pp_bd_acc *dst, const struct pp_bd_acc *src)
{
	for (int i = 0; i < PP_NCOMP; i++)
		bp_hist_merge(&dst->comp[i], &src->comp[i]);
	bp_hist_merge(&dst->rtt, &src->rtt);
	dst->rtt_mono_sum += src->rtt_mono_sum;
	dst->samples += src->samples;
	dst->complete += src->complete;
	for (int i = 0; i < PP_NMISS; i++)
		dst->miss[i] += src->miss[i];
}

const char *pp_comp_name(int comp)
{
	static const char *const names[PP_NCOMP] = {
		"client send path", "server rx wake-up", "server processing",
		"server send path", "client rx wake-up", "remainder (wire, stacks)",
	};
	return comp >= 0 && comp < PP_NCOMP ? names[comp] : "?";
}

const char *pp_comp_key(int comp)
{
	static const char *const keys[PP_NCOMP] = {
		"client_send", "server_rx_wakeup", "server_processing",
		"server_send", "client_rx_wakeup", "remainder",
	};
	return comp >= 0 && comp < PP_NCOMP ? keys[comp] : "unknown";
}

const char *pp_miss_text(int miss)
{
	switch (miss) {
	case PP_MISS_CLIENT_TX: return "no software tx timestamp on the client";
	case PP_MISS_CLIENT_RX: return "no software rx timestamp on the client";
	case PP_MISS_SERVER_RX: return "no software rx timestamp on the server";
	case PP_MISS_SERVER_TX: return "the server's send path never came back (tx timestamp missing or late)";
	case PP_MISS_ORDER: return "timestamps out of order (clock step?)";
	default: return "?";
	}
}
